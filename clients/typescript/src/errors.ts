/** Errors the client throws: one per kind of API answer, each carrying the API's error shape. */

/** An error answer from the API: `status`, the server's `error` type, `detail`, `field`. */
export class FactledgerError extends Error {
  readonly status: number;
  readonly error: string;
  readonly detail: string;
  readonly field: string | null;

  constructor(status: number, error: string, detail: string, field: string | null = null) {
    super(`${status} ${error}: ${detail}`);
    this.name = new.target.name;
    this.status = status;
    this.error = error;
    this.detail = detail;
    this.field = field;
  }
}

/** 401: the token is missing, expired, forged or from an unknown key. */
export class AuthenticationFailedError extends FactledgerError {}
/** 403: the token's role or subject does not allow this. */
export class PermissionDeniedError extends FactledgerError {}
/** 404: no such subject, session, change or item in your tenant. */
export class NotFoundError extends FactledgerError {}
/** 409: a concurrent change, a broken business rule, or the same key still in progress. */
export class ConflictError extends FactledgerError {}
/** 413: the body exceeds the server's limit. */
export class PayloadTooLargeError extends FactledgerError {}
/** 422: invalid input; `field` names it. */
export class InvalidRequestError extends FactledgerError {}
/** 5xx: the server or one of its dependencies is unavailable (retried automatically). */
export class ServerUnavailableError extends FactledgerError {}

/** The server could not be reached (after the retries). */
export class TransportFailedError extends FactledgerError {
  constructor(detail: string) {
    super(0, "TransportError", detail);
  }
}

const BY_STATUS: Record<number, new (...args: ConstructorParameters<typeof FactledgerError>) => FactledgerError> = {
  401: AuthenticationFailedError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: InvalidRequestError,
};

/** The error for an answer's status and body; tolerates bodies that are not the API's shape. */
export function errorFor(status: number, body: unknown): FactledgerError {
  let error = "HTTPError";
  let detail = `status ${status}`;
  let field: string | null = null;
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const shape = body as Record<string, unknown>;
    if (shape.error !== undefined) error = String(shape.error);
    if (shape.detail !== undefined) detail = String(shape.detail);
    if (shape.field !== undefined && shape.field !== null) field = String(shape.field);
  }
  const Klass = BY_STATUS[status] ?? (status >= 500 ? ServerUnavailableError : FactledgerError);
  return new Klass(status, error, detail, field);
}
