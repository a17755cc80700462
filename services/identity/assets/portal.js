// The developer portal's copy buttons: a button[data-copy] copies the text of the element it names (a value
// shown once: a client secret, an API key, a signing secret) and says so in its status line. Without
// JavaScript the buttons stay hidden and the value is still selected whole by one click (user-select: all).
(function () {
  'use strict';
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    var status = document.getElementById(button.getAttribute('data-copy') + '-status');
    if (!target) return;
    var say = function (text) {
      if (status) status.textContent = text;
    };
    var select = function () {
      var range = document.createRange();
      range.selectNodeContents(target);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    };
    var fallback = function () {
      select();
      var copied = false;
      try {
        copied = document.execCommand('copy');
      } catch {
        copied = false;
      }
      say(copied ? 'Copied.' : 'Selected: press Ctrl+C (or ⌘C) to copy.');
    };
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = target.textContent;
      if (navigator.clipboard && window.isSecureContext)
        navigator.clipboard.writeText(text).then(function () {
          say('Copied.');
        }, fallback);
      else fallback();
    });
  });
})();
