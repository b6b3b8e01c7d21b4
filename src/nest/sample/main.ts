// A host's entry point, as the README tells hosts to begin (agentrx's own sources use its lite build).
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

/**
 * Starts the sample host on `HOST`:`PORT` (default 127.0.0.1:3000). SIGINT/SIGTERM close the app,
 * which ends open AG-UI streams and stops the AgentRx facade.
 */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks();
  const host = process.env['HOST'] ?? '127.0.0.1';
  const port = Number(process.env['PORT'] ?? 3000);
  await app.listen(port, host);
  process.stderr.write(`agentrx Nest sample on http://${host}:${port}/ (POST /ask, POST /agent)\n`);
}

await bootstrap();
