// Placeholder so the workspace builds before this package has sources; replaced by its real exports.
export {};
