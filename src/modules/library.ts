/**
 * The library a request works in: an account's live library, or its separate sandbox library
 * (what `svc_test_` keys see). Every note and folder belongs to exactly one.
 */
export interface Library {
  accountId: string
  sandbox: boolean
}
