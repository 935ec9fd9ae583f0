// parse-prometheus-text-format ships no types; the metrics test uses this much of it.
declare module 'parse-prometheus-text-format' {
  export interface MetricFamily {
    name: string
    help: string
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
    metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[]
  }
  /** Throws on a line that is not of the text format. */
  export default function parsePrometheusTextFormat(text: string): MetricFamily[]
}
