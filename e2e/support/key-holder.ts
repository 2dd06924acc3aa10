// A person signed up over HTTP (software passkey, real session) whose wallet key the test holds, as the person's
// browser would after unsealing it: the server only needs a seal to exist. An API key grants the wallet in approve
// mode; the helpers ask for signatures over /mcp and approve them over the app's own routes.
import assert from "node:assert/strict";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { RunningApp } from "./app";
import { mcp } from "./oauth";
import { signedUpSession } from "./session";
import type { SoftAuthenticator } from "./soft-authenticator";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { transactionForSigning, type RequestPayload } from "@/lib/wallet/request-payload";

type ToolReply = { result?: { isError?: boolean; structuredContent?: { request_id?: string }; content?: { text: string }[] } };

export type KeyHolder = Awaited<ReturnType<typeof keyHolder>>;

export async function keyHolder(app: RunningApp, email: string) {
  const person = await signedUpSession(app, email);
  const signer = privateKeyToAccount(generatePrivateKey());
  const credentialId = (
    await db().credential.create({
      data: {
        id: randomId("cr_"),
        userId: person.userId,
        name: "Main",
        kind: "evm",
        address: signer.address,
        seals: { create: { passkeyId: person.passkey.id, ciphertext: "c".repeat(64), iv: "i".repeat(16), prfSalt: "s".repeat(43) } },
      },
    })
  ).id;

  /** The person's passkey (or `passkey`) answers the challenge `optionsPath` issues. */
  async function assertion(optionsPath: string, body: unknown = {}, passkey: SoftAuthenticator = person.passkey) {
    const { status, body: answer } = await person.session.json<{ challenge?: string; options?: { challenge: string } }>(optionsPath, body);
    assert.equal(status, 200, JSON.stringify(answer));
    return passkey.assert(answer.options ?? (answer as { challenge: string })) as AuthenticationResponseJSON;
  }

  const key = { name: "Load bot", credentials: [{ credentialId, mode: "approve" }] };
  const issued = await person.session.json<{ key: string }>("/api/api-keys", {
    ...key,
    assertion: await assertion("/api/api-keys/options", key),
  });
  assert.equal(issued.status, 200, JSON.stringify(issued.body));
  const apiKey = issued.body.key;
  const { id: clientId } = await db().client.findFirstOrThrow({ where: { kind: "api_key", userId: person.userId } });

  /** A sensitive tool call: the request id, or the refusal (a tool error's text, or the HTTP status). */
  async function ask(tool: string, args: Record<string, unknown>): Promise<{ requestId?: string; refusal?: string }> {
    const response = await mcp(app, apiKey, "tools/call", { name: tool, arguments: { credential_id: credentialId, ...args } });
    if (response.status !== 200) return { refusal: `HTTP ${response.status}` };
    const reply = (await response.json()) as ToolReply;
    const requestId = reply.result?.structuredContent?.request_id;
    return requestId ? { requestId } : { refusal: reply.result?.content?.[0]?.text ?? JSON.stringify(reply) };
  }

  /** What the approval page's browser does: options, the passkey, a signature over exactly the payload; not yet posted. */
  async function prepareApproval(requestId: string, passkey: SoftAuthenticator = person.passkey) {
    const path = `/api/approvals/${requestId}`;
    const { status, body } = await person.session.json<{ options: { challenge: string }; payload: RequestPayload }>(`${path}/options`);
    assert.equal(status, 200, JSON.stringify(body));
    const { payload } = body;
    const signature =
      payload.kind === "sign_message"
        ? await signer.signMessage({ message: payload.message })
        : payload.kind === "send_transaction"
          ? await signer.signTransaction(transactionForSigning(payload.transaction))
          : payload.kind === "sign_typed_data"
            ? await signer.signTypedData(payload.typedData as Parameters<typeof signer.signTypedData>[0])
            : assert.fail("an allowance is approved on its own route");
    const approval = { assertion: passkey.assert(body.options), signature };
    return {
      payload,
      path: `${path}/approve`,
      approval,
      post: () => person.session.json<Record<string, unknown>>(`${path}/approve`, approval),
    };
  }

  return { person, signer, credentialId, apiKey, clientId, assertion, ask, prepareApproval };
}
