import { IsEmail, IsString, Length, MaxLength } from '../../core/util/class-validator.js';
import { JSONSchema } from '../../core/util/class-validator.js';
import { injectable } from '../../core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../core/plugin/tool-handler.js';

/** Input of `send_email`. */
export class SendEmailInput {
  /** The recipient's address, e.g. `bob@example.com`. */
  @JSONSchema({ description: 'Recipient e-mail address, e.g. "bob@example.com".' })
  @IsString()
  @MaxLength(254)
  @IsEmail()
  to!: string;

  /** The subject line, 1–200 characters. */
  @JSONSchema({ description: 'Subject line of the e-mail.' })
  @IsString()
  @Length(1, 200)
  subject!: string;
}

/**
 * `send_email`: a demo of a tool that needs the user's approval. It is declared
 * `requireApproval`, so every call waits for the caller's decision first (an AG-UI interrupt on
 * `agentrx serve`, `confirmTool` or `--confirm` elsewhere). It sends nothing: once allowed it only
 * returns a text saying what it would have sent and that it did not. With no side effect it is
 * idempotent.
 */
@injectable()
export class SendEmailToolHandler implements ToolHandler<SendEmailInput> {
  readonly name = 'send_email';
  readonly description = 'Sends an e-mail (a demo: it only pretends, and its result says so). ' + "Every call needs the user's approval before it runs.";
  readonly inputType = SendEmailInput;
  readonly requireApproval = true;
  readonly idempotent = true;

  handle(input: SendEmailInput, ctx: ToolContext): string {
    ctx.signal.throwIfAborted();
    return `pretended to send an e-mail to ${input.to} with the subject "${input.subject.trim()}"; nothing was sent (send_email is a demo tool)`;
  }
}
