import { Theme } from '@radix-ui/themes';
// Radix Themes' stylesheet in parts: its base tokens, only the color scales the dashboard uses
// (accent indigo, gray slate, and the status colors), the components and the layout utilities
// (the whole styles.css carries every scale: 86 kB gzipped instead of 65 kB).
import '@radix-ui/themes/tokens/base.css';
import '@radix-ui/themes/tokens/colors/indigo.css';
import '@radix-ui/themes/tokens/colors/slate.css';
import '@radix-ui/themes/tokens/colors/red.css';
import '@radix-ui/themes/tokens/colors/green.css';
import '@radix-ui/themes/tokens/colors/amber.css';
import '@radix-ui/themes/tokens/colors/blue.css';
import '@radix-ui/themes/components.css';
import '@radix-ui/themes/utilities.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import './styles.css';

/**
 * The page's CSP nonce (the server puts a fresh one in index.html per load). The scroll lock of
 * Radix's dialogs and selects inserts a `<style>` element whose rules depend on the window (the
 * scrollbar's width), so it cannot be allowed by a hash: it takes the nonce from this global,
 * which its `get-nonce` reads when it inserts the element.
 */
const nonce = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce;
if (nonce) (globalThis as { __webpack_nonce__?: string }).__webpack_nonce__ = nonce;

/** The system's light or dark preference, as the page opens. */
const DARK = window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <Theme
        appearance={DARK ? 'dark' : 'light'}
        accentColor="indigo"
        grayColor="slate"
        radius="medium"
        panelBackground="solid"
      >
        <App />
      </Theme>
    </StrictMode>,
  );
}
