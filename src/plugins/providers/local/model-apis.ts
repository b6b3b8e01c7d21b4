import { anthropicMessagesApi } from './anthropic-messages.js';
import { geminiApi } from './gemini.js';
import type { LocalModelApiId } from './local.config.js';
import { openAiChatApi, type ModelApi } from './model-api.js';
import { openAiResponsesApi } from './openai-responses.js';

const APIS: Readonly<Record<LocalModelApiId, ModelApi>> = {
  'openai-chat': openAiChatApi,
  'anthropic-messages': anthropicMessagesApi,
  'openai-responses': openAiResponsesApi,
  gemini: geminiApi,
};

/** The model API of `providers.local.api` (validated with the config). */
export function modelApiOf(id: LocalModelApiId): ModelApi {
  return APIS[id];
}
