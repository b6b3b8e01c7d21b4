/**
 * The only module that imports inversify. Everything else imports DI primitives from here, so the
 * project has one inversify copy and one place to adapt when its API changes (v7 and v8 swap the
 * sync/async meaning of load/unbind).
 * It loads `reflect-metadata` first: the decorators below need the Reflect metadata API.
 */
import './reflect-metadata.js';
export { Container, ContainerModule, inject, injectable, multiInject, optional, postConstruct, preDestroy, injectFromBase } from 'inversify';
export type { ContainerModuleLoadOptions, ResolutionContext, ServiceIdentifier, Newable } from 'inversify';
