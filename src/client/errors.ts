import { SpeedMatrixError } from '../errors.js';
import type { ClientErrorCode } from '../shapes/timeline.js';

/**
 * Codes of the one error class of the client. Request failures use the ClientErrorCode union
 * (and normally never throw: they end a RequestTimeline); `invalid-option` is a setup error.
 */
export type ClientErrorThrowCode = ClientErrorCode | 'invalid-option';

/**
 * The client's one error class, with a stable `code`. Thrown only where something must throw:
 * invalid options (setup), and inside the SSE parser (caught by the stream and turned into a
 * `protocol` end). A failed request is data (RequestTimeline.end), never a ClientError rejection.
 */
export class ClientError extends SpeedMatrixError<ClientErrorThrowCode> {
  override name = 'ClientError';
}
