import type { ValidatorOptions } from '../util/class-validator.js';

/**
 * How every part of the configuration is validated: an unknown key is an issue (so a typo never
 * passes silently), and each issue keeps its target and value for the message.
 */
export const CONFIG_VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  validationError: { target: true, value: true },
};
