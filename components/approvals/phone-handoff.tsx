import QRCode from "qrcode";

/** The QR code's dark modules as one SVG path, drawn by React (no markup from elsewhere in the page). */
function qrPath(text: string): { size: number; d: string } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: "M" });
  let d = "";
  for (let y = 0; y < modules.size; y++) {
    for (let x = 0; x < modules.size; x++) if (modules.get(y, x)) d += `M${x} ${y}h1v1h-1z`;
  }
  return { size: modules.size, d };
}

/**
 * On a desktop, the approval can be finished on the phone that holds the passkey: the page's own address as a
 * QR code (it carries no secret; the phone signs in and the page checks the request is theirs). Hidden on
 * narrow screens, where the person already is on the phone.
 */
export function PhoneHandoff({ url }: { url: string }) {
  const { size, d } = qrPath(url);
  return (
    <details className="handoff">
      <summary>Approve on your phone</summary>
      <p className="small muted">Scan with your phone&apos;s camera, sign in with your passkey there, and approve.</p>
      <svg className="qr" viewBox={`-2 -2 ${size + 4} ${size + 4}`} role="img" aria-label="QR code of this approval page's address">
        <rect x={-2} y={-2} width={size + 4} height={size + 4} fill="#fff" />
        <path d={d} fill="#000" />
      </svg>
      <p className="small mono">{url}</p>
    </details>
  );
}
