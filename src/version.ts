/** The interface version (SPEC.md "Versioning"), reported by GET /v1, GET /v1/health and the OpenAPI document. */
export const VERSION = '1.1.0'
