import { DeadEnd } from "@/components/nav/dead-end";

/** Any address that leads nowhere. */
export default function NotFound() {
  return (
    <DeadEnd title="Page not found">
      <p>There is nothing at this address. It may have been mistyped, or the page has moved.</p>
    </DeadEnd>
  );
}
