import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { exportOptions, exportReasonSchema } from "@/lib/wallet/key-export";

/** The passkey challenge that unseals this wallet's key in the browser, to show it or to write a recovery kit. */
export const POST = appRoute(z.object({ reason: exportReasonSchema }), ({ reason }, { user, params }) =>
  exportOptions(user.id, params.id, reason),
);
