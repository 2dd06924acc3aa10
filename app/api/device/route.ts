import { z } from "zod";
import { appRoute } from "@/lib/routes/app-route";
import { findDeviceRequest } from "@/lib/oauth/device-authorization";

export const POST = appRoute(z.object({ userCode: z.string().max(40) }), ({ userCode }) => findDeviceRequest(userCode), {
  limit: "userCode",
});
