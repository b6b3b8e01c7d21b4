import { SpanStatusCode, type AttributeValue } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** An SDK tracer provider that keeps every ended span in memory. */
export function memoryTracing(): { provider: BasicTracerProvider; exporter: InMemorySpanExporter; spans: () => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { provider, exporter, spans: () => exporter.getFinishedSpans() };
}

/** Span queries for assertions. */
export class SpanTree {
  constructor(readonly spans: readonly ReadableSpan[]) {}

  named(prefix: string): ReadableSpan[] {
    return this.spans.filter((s) => s.name === prefix || s.name.startsWith(`${prefix} `));
  }

  one(prefix: string): ReadableSpan {
    const found = this.named(prefix);
    if (found.length !== 1) throw new Error(`expected one span named ${prefix}, got ${found.map((s) => s.name).join(', ') || 'none'}`);
    return found[0]!;
  }

  children(parent: ReadableSpan): ReadableSpan[] {
    return this.spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
  }

  parentOf(span: ReadableSpan): ReadableSpan | undefined {
    return this.spans.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);
  }

  get traceIds(): Set<string> {
    return new Set(this.spans.map((s) => s.spanContext().traceId));
  }

  /** Every attribute key of every span. */
  get attributeKeys(): Set<string> {
    return new Set(this.spans.flatMap((s) => Object.keys(s.attributes)));
  }

  /** Every string found in attribute values (arrays flattened). */
  get attributeStrings(): string[] {
    return this.spans.flatMap((s) =>
      Object.values(s.attributes)
        .flatMap((v: AttributeValue | undefined) => (Array.isArray(v) ? v : [v]))
        .filter((v): v is string => typeof v === 'string'),
    );
  }
}

/** Span start/end in epoch ms. */
export function startMs(s: ReadableSpan): number {
  return s.startTime[0] * 1000 + s.startTime[1] / 1e6;
}
export function endMs(s: ReadableSpan): number {
  return s.endTime[0] * 1000 + s.endTime[1] / 1e6;
}

export const isError = (s: ReadableSpan): boolean => s.status.code === SpanStatusCode.ERROR;

/** Attribute keys that carry content and must be absent unless captureContent is on. */
export const CONTENT_KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
];
