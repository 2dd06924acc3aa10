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
  {
    // The Smart Accounts Kit sends usage telemetry unless DO_NOT_TRACK is set before its first call: the app and the
    // browser never load it (docs/decisions/0015-allowances.md); only the local chain's deployment does, after setting it.
    files: ["app/**", "components/**", "lib/**", "server.ts", "instrumentation.ts", "proxy.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@metamask/smart-accounts-kit", "@metamask/smart-accounts-kit/*"],
              message: "Use @metamask/delegation-core and -abis: the kit phones home (docs/decisions/0015-allowances.md).",
            },
          ],
        },
      ],
    },
  },
];

export default config;
