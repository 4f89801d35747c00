// Routing for the operator's side of the server: the dashboard pages, its one static asset
// and the steering endpoints (ApiServer::OperatorRoute is defined beside it, in
// operator_routes.cc). Kept apart from api_server.cc so the read API's routing stays as it is.
#pragma once

#include <string_view>

namespace aiscale::server {

// The route label for aiscale_api_requests_total ("dashboard", "workload_page", "static",
// "steering"), or "" when (method, path) is not an operator route.
std::string_view OperatorRouteName(std::string_view method, std::string_view path);

}  // namespace aiscale::server
