/** @type {import('next').NextConfig} */
const nextConfig = {
  // A second build folder lets two developers (or helpers) build and test side by side.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  serverExternalPackages: ["better-sqlite3", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "pg"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
