import { BadRequestException, Body, Controller, HttpCode, Inject, Injectable, Post } from '@nestjs/common';
import type { AgentRx } from '../../agentrx.js';
import { AGENTRX } from '../agentrx.module.js';

/** What `POST /ask` answers. */
export interface AskAnswer {
  readonly text: string;
  readonly turns: number;
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
}

/** A host service using the facade Nest injects. */
@Injectable()
export class AskService {
  constructor(@Inject(AGENTRX) private readonly rx: AgentRx) {}

  /** Runs one prompt to its end. Rejects with the run's `AgentRxError`. */
  async ask(prompt: string): Promise<AskAnswer> {
    const result = await this.rx.run({ prompt });
    return { text: result.text, turns: result.turns, usage: result.usage };
  }
}

/** `POST /ask {"prompt": "..."}` → the answer as JSON (the sample's plain, non-streaming API). */
@Controller('ask')
export class AskController {
  constructor(@Inject(AskService) private readonly service: AskService) {}

  /** 200 with {@link AskAnswer}; 400 when `prompt` is not a non-empty string. */
  @Post()
  @HttpCode(200)
  ask(@Body() body: unknown): Promise<AskAnswer> {
    const prompt = typeof body === 'object' && body !== null ? (body as { prompt?: unknown }).prompt : undefined;
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new BadRequestException('send {"prompt": "<non-empty text>"}');
    return this.service.ask(prompt);
  }
}
