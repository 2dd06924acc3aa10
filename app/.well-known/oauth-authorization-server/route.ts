import { config } from "@/lib/config";
import { authorizationServerMetadata } from "@/lib/oauth/metadata";
import { publicDocument } from "@/lib/http/discovery";
import { preflight } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

export function GET() {
  return publicDocument(authorizationServerMetadata(config()));
}

export const OPTIONS = preflight;
