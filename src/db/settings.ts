import type { Store } from './store'

/**
 * A secret kept in the database, made on first use: the same across restarts and, on PostgreSQL, on
 * every node (the first node to ask inserts it; the others' inserts do nothing and they read that
 * one), unique per installation.
 */
export async function instanceSecret(store: Store, name: string): Promise<string> {
  const existing = await store.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', [name])
  if (existing) return existing.value
  const value = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')
  await store.run('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', [name, value])
  return (await store.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', [name]))!.value
}

/**
 * `instanceSecret`, read once when first needed and kept: services are built synchronously, and most
 * commands never sign anything. A failed read is not kept (the next call asks again).
 */
export function lazySecret(store: Store, name: string): () => Promise<string> {
  let secret: Promise<string> | null = null
  return () => {
    secret ??= instanceSecret(store, name).catch(err => {
      secret = null
      throw err
    })
    return secret
  }
}
