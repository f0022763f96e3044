"use strict";
// The dashboard's only script (served from /dashboard/static, so a strict
// `script-src 'self'` policy holds). Pages work without it, minus copying and
// the confirmation prompts.

// <button data-copy="ID">: copies the text of the element #ID to the clipboard.
function showCopyResult(button, text) {
  const status = document.getElementById(button.dataset.copy + "-status");
  if (status) {
    status.textContent = text;
  }
}

function selectText(element) {
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) {
    return;
  }
  const source = document.getElementById(button.dataset.copy);
  if (!source) {
    return;
  }
  try {
    await navigator.clipboard.writeText(source.textContent.trim());
    showCopyResult(button, "Copied");
  } catch (error) {
    // No clipboard access (an insecure origin, or permission refused): select it instead.
    selectText(source);
    showCopyResult(button, "Selected: press Ctrl+C (⌘C) to copy");
  }
});

// <form data-confirm="question">: asks before submitting (revoking, cancelling).
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form.dataset ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
