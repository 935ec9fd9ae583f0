/**
 * A TCP proxy on loopback in front of a server, for a network cut a browser meets as it would a real
 * one: `cut(ms)` resets every connection through it (both sides see the socket die, a WebSocket closes
 * with 1006) and refuses new ones for `ms`, then listens again on the same port.
 */
import type { Socket, TCPSocketListener } from 'bun'

interface End {
  socket: Socket<Pair> | null
  /** bytes for this end written while it was not ready or not draining */
  pending: Uint8Array[]
}
interface Pair { client: End; upstream: End }

function write(end: End, data: Uint8Array) {
  if (!end.socket || end.pending.length) {
    end.pending.push(data)
    return
  }
  const n = end.socket.write(data)
  if (n < data.length) end.pending.push(data.subarray(n))
}

function drain(end: End) {
  while (end.socket && end.pending.length) {
    const head = end.pending[0]!
    const n = end.socket.write(head)
    if (n < head.length) {
      end.pending[0] = head.subarray(n)
      return
    }
    end.pending.shift()
  }
}

export async function tcpProxy(targetPort: number) {
  const pairs = new Set<Pair>()
  let listener: TCPSocketListener<Pair> | null = null
  let port = 0

  function listen() {
    listener = Bun.listen<Pair>({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(client) {
          const pair: Pair = { client: { socket: client, pending: [] }, upstream: { socket: null, pending: [] } }
          client.data = pair
          pairs.add(pair)
          Bun.connect<Pair>({
            hostname: '127.0.0.1',
            port: targetPort,
            data: pair,
            socket: {
              open(upstream) {
                pair.upstream.socket = upstream
                drain(pair.upstream)
              },
              data: (_, d) => write(pair.client, new Uint8Array(d)),
              drain: () => drain(pair.client),
              close: () => { pairs.delete(pair); pair.client.socket?.end() },
              error: () => pair.client.socket?.terminate(),
            },
          }).catch(() => client.terminate())
        },
        data: (client, d) => write(client.data.upstream, new Uint8Array(d)),
        drain: client => drain(client.data.client),
        close: client => { pairs.delete(client.data); client.data.upstream.socket?.end() },
        error: client => client.data.upstream.socket?.terminate(),
      },
    })
    port = listener.port
  }
  listen()

  return {
    port,
    /** every connection reset, new ones refused for `ms`, then served again */
    async cut(ms: number) {
      listener!.stop(true)
      for (const pair of pairs) {
        pair.client.socket?.terminate()
        pair.upstream.socket?.terminate()
      }
      pairs.clear()
      await Bun.sleep(ms)
      listen()
    },
    stop() {
      listener?.stop(true)
      for (const pair of pairs) pair.client.socket?.terminate()
    },
  }
}
