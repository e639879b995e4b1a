// Types of the dev-only libraries perf/libraries.ts measures, which ship none.
declare module 'parse-prometheus-text-format' {
  interface Family {
    name: string;
    help: string;
    type: string;
    metrics: Array<{
      value?: string;
      labels?: Record<string, string>;
      timestamp_ms?: string;
      buckets?: Record<string, string>;
      quantiles?: Record<string, string>;
      count?: string;
      sum?: string;
    }>;
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
