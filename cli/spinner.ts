// A spinner on stderr while waiting for an approval. On a terminal it animates
// in place, cut to the terminal's width; elsewhere (a pipe, a log, CI) it prints its text once per change.
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Spinner {
  private timer?: NodeJS.Timeout;
  private frame = 0;
  private text = "";
  private readonly tty: boolean;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.tty = Boolean(stream.isTTY) && process.env.TERM !== "dumb";
  }

  start(text: string): void {
    this.text = text;
    if (!this.tty) {
      this.stream.write(`${text}\n`);
      return;
    }
    this.render();
    this.timer = setInterval(() => this.render(), 100);
    this.timer.unref();
  }

  update(text: string): void {
    if (text === this.text) return;
    this.text = text;
    if (!this.tty) this.stream.write(`${text}\n`);
  }

  stop(finalLine?: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty) this.stream.write("\r\x1b[2K");
    if (finalLine) this.stream.write(`${finalLine}\n`);
  }

  private render(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    // One line that never wraps: a wrapped line would not be cleared by \r, and each frame would add a line.
    this.stream.write(`\r\x1b[2K${fitWidth(`${FRAMES[this.frame]} ${this.text}`, (this.stream.columns || 80) - 1)}`);
  }
}

/** The text cut to `width` characters (an ellipsis marks the cut). */
export function fitWidth(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join("")}…`;
}
