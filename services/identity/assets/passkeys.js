// Passkey forms of the identity pages: runs the WebAuthn ceremony whose options the server put in
// the form's data-options, puts the browser's answer in the form's "credential" field and submits.
// Everything else on the pages works without JavaScript.
(function () {
  'use strict';
  var lib = window.SimpleWebAuthnBrowser;
  if (!lib || !lib.browserSupportsWebAuthn()) return;
  var MESSAGES = {
    NotAllowedError: 'The passkey request was cancelled or timed out. Try again.',
    InvalidStateError: 'This passkey is already registered.',
  };
  document.querySelectorAll('[data-passkey-section]').forEach(function (section) {
    section.hidden = false;
  });
  document.querySelectorAll('form[data-passkey]').forEach(function (form) {
    var status = form.querySelector('[data-passkey-status]');
    var button = form.querySelector('button[type=submit]');
    form.addEventListener('submit', function (event) {
      if (form.elements.credential.value) return;
      event.preventDefault();
      var optionsJSON = JSON.parse(form.getAttribute('data-options'));
      var ceremony = form.getAttribute('data-passkey') === 'register' ? lib.startRegistration : lib.startAuthentication;
      button.disabled = true;
      status.textContent = '';
      ceremony({ optionsJSON: optionsJSON }).then(
        function (credential) {
          form.elements.credential.value = JSON.stringify(credential);
          form.submit();
        },
        function (err) {
          button.disabled = false;
          status.textContent = MESSAGES[err && err.name] || 'The passkey could not be used. Try again.';
        },
      );
    });
  });
})();
