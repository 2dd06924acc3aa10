// Reading a secret without putting it on the command line, where `ps` and shell history would keep it.

/** One line from stdin: typed without echo at a terminal (after `prompt` on stderr), else the first line piped in. */
export async function readSecretLine(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream, prompt: string): Promise<string> {
  if (!stdin.isTTY) {
    let piped = "";
    for await (const chunk of stdin) piped += String(chunk);
    return piped.split(/\r?\n/)[0].trim();
  }
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  try {
    let typed = "";
    for await (const chunk of stdin) {
      for (const character of String(chunk)) {
        if (character === "\r" || character === "\n") return typed.trim();
        if (character === "\u0003") throw new Error("Interrupted");
        typed = character === "\u007f" ? typed.slice(0, -1) : typed + character;
      }
    }
    return typed.trim();
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    stderr.write("\n");
  }
}
