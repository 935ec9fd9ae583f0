import { ALL_SCOPES } from '../../http/contract'

/** How a client may authenticate at the token and revocation endpoints (RFC 6749 section 2.3). */
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const
export type AuthMethod = (typeof AUTH_METHODS)[number]

/** RFC 8414 authorization server metadata of the server at `issuer`. */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/docs`,
  }
}

/** RFC 9728 protected resource metadata, for the API (`publicUrl`) or the MCP endpoint. */
export function protectedResourceMetadata(issuer: string, resource: string) {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'notesvc',
    resource_documentation: `${issuer}/docs`,
  }
}
