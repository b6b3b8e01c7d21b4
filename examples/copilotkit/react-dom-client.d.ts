// The little of react-dom/client this example uses, typed: this repository installs React for
// its tests without @types/react-dom. An app that installs @types/react-dom does not need this file.
declare module 'react-dom/client' {
  import type { ReactNode } from 'react';

  export interface Root {
    render(children: ReactNode): void;
    unmount(): void;
  }

  export function createRoot(container: Element | DocumentFragment): Root;
}
