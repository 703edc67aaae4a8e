import { defineConfig, type ProxyOptions } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';
import { fileURLToPath, URL } from 'node:url';

const webPort = Number(process.env.ASSAY_WEB_PORT ?? 5173);
const apiTarget = `http://127.0.0.1:${process.env.ASSAY_PORT ?? 8000}`;

// Proxy /api to the Flask API so the browser sees one origin (cookies, CSRF).
// Server-Sent Events must stream unbuffered: ask upstream for no compression
// and never compress on the way back.
const proxy: Record<string, ProxyOptions> = {
  '/api': {
    target: apiTarget,
    changeOrigin: false,
    configure: (p) => {
      p.on('proxyReq', (proxyReq) => {
        proxyReq.setHeader('accept-encoding', 'identity');
      });
    },
  },
};

// Content Security Policy for the built app: everything from our own origin.
// style-src needs 'unsafe-inline' only for React's style attributes (progress width).
const securityHeaders = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
};

export default defineConfig({
  plugins: [react(), tailwindcss()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: {
    host: '127.0.0.1',
    port: webPort,
    strictPort: true,
    proxy,
  },
  preview: {
    host: '127.0.0.1',
    port: webPort,
    strictPort: true,
    proxy,
    headers: securityHeaders,
  },
  build: {
    sourcemap: false,
  },
});
