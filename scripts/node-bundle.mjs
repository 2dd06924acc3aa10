// The project's own TypeScript compiled for bare Node (npm start's launcher, the production server): one ES module
// with the project's modules inlined and packages left to node_modules. Plain JavaScript, since the launcher runs
// it before anything is compiled.
import fs from "node:fs";
import path from "node:path";
import { buildSync } from "esbuild";

/**
 * Compiles `entry` to `outfile` and returns `outfile`. Milliseconds, so it runs at every start; the file is replaced
 * atomically, since test processes start apps side by side.
 */
export function bundleForNode(entry, outfile) {
  const [output] = buildSync({
    entryPoints: [entry],
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node24",
    outfile,
    write: false,
    logLevel: "error",
  }).outputFiles;
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  const staged = `${outfile}.${process.pid}`;
  fs.writeFileSync(staged, output.contents);
  fs.renameSync(staged, outfile);
  return outfile;
}
