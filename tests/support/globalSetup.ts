import type { TestProject } from 'vitest/node';
import { startPushService } from './pushService.ts';

/** Starts the push-service stand-in once for a test project, and stops it after. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const push = await startPushService();
  project.provide('pushServiceUrl', push.url);
  return () => push.close();
}
