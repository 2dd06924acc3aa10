/**
 * The app's colours, light and dark as the system chooses, every pair kept at WCAG AA contrast. One source for both
 * kinds of page: the root layout sets them on every screen (app/globals.css only names them), and the standalone error
 * pages of lib/http/error-page.ts, which Next does not render, look like the app with them.
 */
export const PALETTE_CSS = `:root {
  color-scheme: light dark;
  --fg: #16181d;
  --muted: #5b6270;
  --line: #d9dde3;
  --accent: #2b59c3;
  --on-accent: #fff;
  --danger: #b42318;
  --danger-bg: #fef3f2;
  --danger-line: #fda29b;
  --ok: #067647;
  --ok-bg: #ecfdf3;
  --ok-line: #abefc6;
  --warn-bg: #fffaeb;
  --warn-line: #fedf89;
  --bg: #fafbfc;
  --surface: #fff;
  --subtle: #f2f4f7;
  --badge: #eef1f6;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6e8ec;
    --muted: #a3aab6;
    --line: #343a46;
    --accent: #7aa2ff;
    --on-accent: #0b1020;
    --danger: #ff8a80;
    --danger-bg: #3a1614;
    --danger-line: #7a2a24;
    --ok: #6ee7a8;
    --ok-bg: #0f2a1d;
    --ok-line: #1f5a3c;
    --warn-bg: #2e2610;
    --warn-line: #6b5414;
    --bg: #0f1115;
    --surface: #171a21;
    --subtle: #1f232b;
    --badge: #262b35;
  }
}`;
