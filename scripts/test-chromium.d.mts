export const CHROMIUM_ARGS: string[];
export const AUTHENTICATOR_OPTIONS: {
  protocol: "ctap2";
  transport: "internal" | "usb";
  hasResidentKey: boolean;
  hasUserVerification: boolean;
  isUserVerified: boolean;
  hasPrf: boolean;
  automaticPresenceSimulation: boolean;
};
export function chromiumForTests(): Promise<{ executablePath: string; env: Record<string, string>; name: string }>;
