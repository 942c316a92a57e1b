/** Errors the client throws, one class per error `type` of the service (as `memory_client.errors`). */

export interface ErrorOptions {
  statusCode?: number;
  errorType?: string;
  body?: unknown;
  cause?: unknown;
}

/** Any error answered by the memory service (or reaching it). */
export class MemoryServiceError extends Error {
  readonly statusCode?: number;
  readonly errorType?: string;
  readonly body?: unknown;

  constructor(message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.statusCode = options.statusCode;
    this.errorType = options.errorType;
    this.body = options.body;
  }
}

/** 400 `invalid_request_error` (and 413): the request was refused; nothing changed. */
export class MemoryValidationError extends MemoryServiceError {}
/** 401: the API key is missing, invalid or revoked. */
export class MemoryAuthenticationError extends MemoryServiceError {}
/** 403: e.g. a read-only key attempted a write. */
export class MemoryPermissionError extends MemoryServiceError {}
/** 404. */
export class MemoryNotFoundError extends MemoryServiceError {}
/** 409: a stale version / content hash precondition, a taken path, a duplicate. */
export class MemoryConflictError extends MemoryServiceError {}
/** A quota was reached (e.g. 10,000 messages in a conversation). */
export class MemoryQuotaExceededError extends MemoryServiceError {}
/** 429 `rate_limit_error`: slow down (the client retries these itself first). */
export class MemoryRateLimitError extends MemoryServiceError {}
/** 5xx: the service failed or is unavailable. */
export class MemoryServerError extends MemoryServiceError {}
/** The service could not be reached, or did not answer in time. */
export class MemoryConnectionError extends MemoryServiceError {}

/** The error for an answer with `statusCode` and `body`, chosen as the Python client chooses it. */
export function errorFor(statusCode: number, body: unknown): MemoryServiceError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const errorType = typeof error?.type === "string" ? error.type : undefined;
  const message = (typeof error?.message === "string" && error.message) || `HTTP ${statusCode}`;
  let cls: typeof MemoryServiceError;
  if (errorType === "quota_exceeded_error") cls = MemoryQuotaExceededError;
  else if (statusCode === 400 || statusCode === 413 || statusCode === 422) cls = MemoryValidationError;
  else if (statusCode === 401) cls = MemoryAuthenticationError;
  else if (statusCode === 403) cls = MemoryPermissionError;
  else if (statusCode === 404) cls = MemoryNotFoundError;
  else if (statusCode === 409) cls = MemoryConflictError;
  else if (statusCode === 429) cls = MemoryRateLimitError;
  else if (statusCode >= 500) cls = MemoryServerError;
  else cls = MemoryServiceError;
  return new cls(message, { statusCode, errorType, body });
}

export function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
