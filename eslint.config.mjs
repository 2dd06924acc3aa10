// One lint for the whole repository: Next's recommended rules (core web vitals)
// and its TypeScript rules, plus the few house rules the code review relies on.
import nextVitals from "eslint-config-next/core-web-vitals";
import nextTypeScript from "eslint-config-next/typescript";

const config = [
  ...nextVitals,
  ...nextTypeScript,
  {
    ignores: ["lib/generated/**", ".next/**", ".next-*/**", "data/**", "node_modules/**", "bench/results/**", "next-env.d.ts"],
  },
  {
    rules: {
      // Prettier wraps code at 140; this also catches the strings and comments it cannot wrap.
      "max-len": [
        "error",
        { code: 140, ignoreUrls: false, ignoreStrings: false, ignoreTemplateLiterals: false, ignoreRegExpLiterals: false },
      ],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
    },
  },
];

export default config;
