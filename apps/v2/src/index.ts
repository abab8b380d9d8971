export { createV2App, unsupportedVersionBody, createVersionRouter, versionOpenApi, type V2AppServices } from './app';
export { versionRoutes, VERSIONS, type V2Services, type Version } from './routes';
export * from './schemas';
