// What TypeScript needs to accept the pages' side-effect import of pages.css: Vite bundles the stylesheet
// into the built CSS, and the import has no value to type.
export {};
