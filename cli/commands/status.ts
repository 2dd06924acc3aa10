// `agent-wallet status`: the connection, each granted credential with its mode and limits, and the pending
// requests, at a glance. Signed out, it still shows the service and says how to sign in (exit code 2).
import { EXIT } from "../exit-codes";
import { keyValues, policySummary, relativeTime, table } from "../format";
import { loadSession } from "../config";
import { baseUrlOf, connect, NotSignedInError, print, type Context, signedInAs } from "./shared";

export async function run(ctx: Context): Promise<number> {
  let connection;
  try {
    connection = await connect(ctx);
  } catch (error) {
    if (error instanceof NotSignedInError) {
      const baseUrl = baseUrlOf(ctx, loadSession(ctx.io.env));
      print(
        ctx,
        { baseUrl, signedIn: false },
        keyValues([
          ["Service", baseUrl],
          ["Signed in", "no"],
        ]),
      );
    }
    throw error;
  }
  const { client } = connection;
  const { credentials, account } = await client.listCredentials({ signal: ctx.signal });
  const [policies, { requests: pending }] = await Promise.all([
    Promise.all(credentials.map((credential) => client.getPolicy({ credential_id: credential.id }, { signal: ctx.signal }))),
    client.listRequests({ status: "pending", limit: 100 }, { signal: ctx.signal }),
  ]);
  // Read after the calls: a refresh during them moved the expiry.
  const tokens = client.tokens;
  const expiresAt = tokens?.expiresAt ? new Date(tokens.expiresAt).toISOString() : null;
  const granted = credentials.map((credential, index) => ({ ...credential, policy: policies[index] }));
  const nameOf = (id: string) => credentials.find((credential) => credential.id === id)?.name ?? id;
  const result = {
    baseUrl: connection.baseUrl,
    account,
    signedIn: true,
    auth: connection.via,
    clientId: connection.session?.clientId ?? null,
    apiKey: connection.apiKey ? `${connection.apiKey.slice(0, 13)}…` : null,
    expiresAt,
    staysConnected: connection.via === "oauth" ? Boolean(tokens?.refreshToken) : null,
    credentials: granted,
    pending,
  };
  const now = new Date();
  const sections = [
    keyValues([
      ["Service", result.baseUrl],
      ["Account", account?.email_hint],
      ["Signed in", signedInAs(connection, account?.client_name)],
      ["Access until", expiresAt && `${expiresAt} (${relativeTime(expiresAt, now)})`],
      ["Stays connected", result.staysConnected === null ? null : result.staysConnected ? "yes" : "no"],
    ]),
    granted.length
      ? table(granted, [
          { header: "CREDENTIAL", value: (c) => c.name },
          { header: "MODE", value: (c) => c.mode },
          { header: "ADDRESS", value: (c) => c.address },
          { header: "LIMITS", value: (c) => policySummary(c.policy) },
        ])
      : "No credentials granted.",
    `Pending requests: ${pending.length}`,
    ...(pending.length
      ? [
          table(pending, [
            { header: "ID", value: (r) => r.request_id },
            { header: "KIND", value: (r) => r.kind },
            { header: "CREDENTIAL", value: (r) => nameOf(r.credential_id) },
            { header: "APPROVE AT", value: (r) => r.approval_url },
          ]),
        ]
      : []),
  ];
  print(ctx, result, sections.join("\n\n"));
  return EXIT.ok;
}
