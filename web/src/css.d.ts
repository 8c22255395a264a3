// Stylesheets imported for their effect (a page's own CSS, e.g. pages/datasets/datasets.css): Vite bundles
// them into the built stylesheet; TypeScript only needs to know the import is allowed.
declare module '*.css';
