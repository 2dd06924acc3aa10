// The browser side of the app's internal /api routes.

class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export async function callApi<T = unknown>(path: string, body: unknown = {}, method = "POST"): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: method === "GET" ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const payload = (await response.json().catch(() => ({}))) as { error?: string; message?: string };
  if (!response.ok) throw new ApiError(payload.error ?? "error", payload.message ?? `Request failed (${response.status})`, response.status);
  return payload as T;
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === "NotAllowedError") return "The passkey prompt was cancelled or timed out.";
    return error.message;
  }
  return "Something went wrong";
}
