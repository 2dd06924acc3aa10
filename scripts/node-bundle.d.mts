export function bundleForNode(entry: string, outfile: string): string;
