import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

/** A payload as the SDK's default converter reads it (a heartbeat's details, a workflow's input); what it cannot read is said so. */
export function decodePayload(payload: temporal.api.common.v1.IPayload | null | undefined): unknown {
  if (payload === null || payload === undefined) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch (err) {
    return `(unreadable payload: ${(err as Error).message})`;
  }
}
