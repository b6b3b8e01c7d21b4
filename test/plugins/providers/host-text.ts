import type { HostEvent } from '../../../src/core/plugin/host-event.js';

/** The text a provider decoded of one event (its first `text` HostEvent, without the tag), or undefined. */
export function hostText(host: readonly HostEvent[]): { readonly text: string; readonly messageId?: string } | undefined {
  for (const h of host) {
    if (h.kind === 'text') return h.messageId !== undefined ? { text: h.text, messageId: h.messageId } : { text: h.text };
  }
  return undefined;
}
