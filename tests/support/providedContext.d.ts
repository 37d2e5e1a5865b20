// What tests/support/globalSetup.ts provides to every test, in Node and in workerd.
declare module 'vitest' {
  export interface ProvidedContext {
    pushServiceUrl: string;
  }
}
export {};
