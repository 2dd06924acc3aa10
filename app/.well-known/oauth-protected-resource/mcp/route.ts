// RFC 9728 §3.1: the path-aware location of the /mcp resource's metadata.
import { config } from "@/lib/config";
import { protectedResourceMetadata } from "@/lib/oauth/metadata";
import { publicDocument } from "@/lib/http/discovery";
import { preflight } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

export function GET() {
  return publicDocument(protectedResourceMetadata(config()));
}

export const OPTIONS = preflight;
