import type { Metadata, Viewport } from "next";
import { PALETTE_CSS } from "@/lib/http/palette";
import "./globals.css";

export const metadata: Metadata = { title: "Agent Wallet", description: "A non-custodial wallet that AI agents can be trusted with" };
export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <head>
        <style dangerouslySetInnerHTML={{ __html: PALETTE_CSS }} />
      </head>
      <body>{children}</body>
    </html>
  );
}
