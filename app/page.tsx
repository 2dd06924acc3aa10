export default function Home() {
  return (
    <main>
      <h1>Agent Wallet</h1>
      <p>A non-custodial wallet for AI agents: every signature waits for your passkey.</p>
    </main>
  );
}
