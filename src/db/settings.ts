import type { Database } from './database'

/** A secret kept in the database, made on first use: the same across restarts, unique per instance. */
export function instanceSecret(db: Database, name: string): string {
  const existing = db.query<{ value: string }, [string]>('SELECT value FROM settings WHERE key = ?').get(name)
  if (existing) return existing.value
  const value = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')
  db.query('INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)').run(name, value)
  return db.query<{ value: string }, [string]>('SELECT value FROM settings WHERE key = ?').get(name)!.value
}
