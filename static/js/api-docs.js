// The API docs page (templates/api/docs.html): Swagger UI over our schema. A file of its own,
// because the site's Content Security Policy allows no inline script.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("swagger-ui");
    if (!root || typeof window.SwaggerUIBundle !== "function") return;
    window.SwaggerUIBundle({
      url: root.dataset.schemaUrl,
      domNode: root,
      deepLinking: true,
      // No call to swagger.io's validator: nothing leaves the site.
      validatorUrl: null,
      persistAuthorization: false,
      tryItOutEnabled: false,
    });
  });
})();
