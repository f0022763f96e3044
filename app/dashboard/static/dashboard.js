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

// <form data-token-fragment>: an e-mailed link carries its one-time token in the URL
// fragment (#t=...), which browsers never send to a server (nor put in logs or a
// Referer). Move it into the form's hidden "token" field and off the address bar; with
// no token, say so ([data-token-missing]) and keep the form from posting nothing.
(function takeTokenFromFragment() {
  const form = document.querySelector("form[data-token-fragment]");
  if (!form) {
    return;
  }
  const input = form.querySelector("input[name=token]");
  const match = /(?:^#|&)t=([A-Za-z0-9_-]+)/.exec(window.location.hash);
  if (match && input && !input.value) {
    input.value = match[1];
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  if (input && !input.value) {
    const missing = document.querySelector("[data-token-missing]");
    if (missing) {
      missing.hidden = false;
    }
    form.querySelectorAll("button[type=submit]").forEach((button) => { button.disabled = true; });
  }
})();

// [data-job-progress="URL"]: a job's progress bar, refreshed from URL (the job's JSON,
// read with the session cookie) every second while the job works; when it ends, the
// page reloads if [data-reload-when-done] (its downloads and Cancel change), else the
// bar and status stay as the last reading shows them.
function showProgress(box, job) {
  const bar = box.querySelector("progress");
  if (bar) {
    bar.max = job.rows_total;
    bar.value = job.rows_done;
  }
  const scope = box.closest("tr, [data-testid=job]") || box;
  scope.querySelectorAll("[data-field]").forEach((field) => {
    const value = job[field.dataset.field];
    if (value === undefined) {
      return;
    }
    if (field.dataset.field === "seconds_left") {
      field.textContent = value === null ? "–" : `about ${Math.round(value)} s`;
    } else {
      field.textContent = typeof value === "number" ? value.toLocaleString("en-US") : value;
    }
  });
}

document.querySelectorAll("[data-job-progress]").forEach((box) => {
  if (box.hasAttribute("data-done")) {
    return;
  }
  const poll = async () => {
    try {
      const response = await fetch(box.dataset.jobProgress, { credentials: "same-origin", cache: "no-store" });
      if (!response.ok) {
        return;  // gone (deleted, signed out): leave the last reading
      }
      const job = await response.json();
      showProgress(box, job);
      if (job.status !== "working") {
        if (box.hasAttribute("data-reload-when-done")) {
          window.location.reload();
        }
        return;
      }
    } catch (error) {
      // a network blip: try again at the next tick
    }
    window.setTimeout(poll, 1000);
  };
  window.setTimeout(poll, 1000);
});
