import Link from "next/link";
import { requireUser } from "@/lib/auth/session";
import { config } from "@/lib/config";
import { clientSetups } from "@/lib/connect/client-setup";
import { AppHeader } from "@/components/nav/app-header";
import { CopyButton } from "@/components/shared/copy-button";
import { SnippetFigure } from "@/components/shared/snippet";

/** Text with `code` in backticks, as the setup module writes it. */
function Prose({ text }: { text: string }) {
  return text.split("`").map((part, index) => (index % 2 ? <code key={index}>{part}</code> : part));
}

export default async function ConnectPage() {
  const user = await requireUser("/connect");
  const { baseUrl, mcpResource } = config();
  const setups = clientSetups(baseUrl);
  return (
    <>
      <AppHeader email={user.email} />
      <main className="connect">
        <h1>Connect an agent</h1>
        <p>
          Give your MCP client this wallet&apos;s endpoint. On its first call it opens the consent screen, where you choose which wallets it
          may use and approve with your passkey. Every signature still waits for your approval.
        </p>
        <p className="endpoint">
          <span className="muted">MCP endpoint</span> <code className="mono">{mcpResource}</code>{" "}
          <CopyButton text={mcpResource} what="MCP endpoint" />
        </p>
        <p className="small muted">
          For scripts and CI, create a personal API key on the <Link href="/clients">Clients</Link> screen and use the “with an API key”
          snippets; keep the key in an environment variable, never in a file you commit.
        </p>
        <nav aria-label="Setup guides">
          <ul className="client-index">
            {setups.map((setup) => (
              <li key={setup.id}>
                <a href={`#${setup.id}`}>{setup.client}</a>
              </li>
            ))}
          </ul>
        </nav>
        {setups.map((setup) => (
          <section key={setup.id} id={setup.id} aria-labelledby={`${setup.id}-heading`} className="client-setup">
            <h2 id={`${setup.id}-heading`}>{setup.client}</h2>
            <p>
              <Prose text={setup.where} />
            </p>
            {setup.snippets.map((snippet) => (
              <SnippetFigure key={snippet.what} snippet={snippet} />
            ))}
          </section>
        ))}
      </main>
    </>
  );
}
